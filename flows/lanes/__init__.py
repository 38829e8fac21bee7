"""Lane flows: the registered steps (steps.py), the one flow that interprets lane graphs (write_article.py)."""
