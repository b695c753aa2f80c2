import sys

from mockkube.cli import main

sys.exit(main())
