"""Entry script for the PyInstaller bundle (the installed package uses ``desktop.app:main``)."""

import sys

from desktop.app import main

if __name__ == "__main__":
    sys.exit(main())
