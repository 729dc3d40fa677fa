"""What every layer shares and no layer owns: the error tree, the memory workflow's names and the lane's
argument types. Standard library only, so the engine, the workflow and the gateway may all import it."""
