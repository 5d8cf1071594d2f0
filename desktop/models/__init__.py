"""View-side data: rows the app's lists draw, built from engine objects."""
