"""The app's widgets and dialogs; each takes plain data and emits signals, the main window wires them."""
