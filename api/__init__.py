"""The FastAPI gateway: auth, tenants, decorate, report, health. Thin over `store/` and `engine/`."""
