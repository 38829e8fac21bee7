"""HTTP edges of the control plane: thin handlers over services."""
