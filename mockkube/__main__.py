import sys

from mockkube.cli.entry import main

sys.exit(main())
