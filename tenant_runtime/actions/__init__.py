"""Actions: one module per change to a tenant's data.

Each action takes the workspace's open transaction and the actor, checks
permission, executes, and writes its audit row. The dashboard, the API, the
CLI and the flows all call these same functions.
"""
