"""What people look at and play in a browser: self-contained pages and the local table server."""
