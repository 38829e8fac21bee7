"""A site's audit log: who did what, when, from its own workspace and from the control plane."""
