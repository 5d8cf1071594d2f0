import sys

from searchain.cli.main import main

sys.exit(main())
