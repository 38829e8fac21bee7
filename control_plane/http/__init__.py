"""What every area's HTTP edge shares: error mapping, guards, dependencies, parameters, base schemas."""
