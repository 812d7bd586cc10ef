"""Small shared utilities (progress reporting)."""
