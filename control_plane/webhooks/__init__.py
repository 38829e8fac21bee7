"""Plugin webhooks: endpoints called (signed) after each publish."""
