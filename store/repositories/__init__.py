"""Every query Lethe makes. Each function takes `tenant_id=` keyword-only, so none can skip the tenant."""
