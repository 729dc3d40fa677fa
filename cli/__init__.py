"""The `lethe` command: dev, gateway, worker, migrate, tenant, register-search-attributes."""
