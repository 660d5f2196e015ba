import sys

from etclib.cli import main

sys.exit(main())
