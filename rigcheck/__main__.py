import sys

from rigcheck.cli import main

sys.exit(main())
