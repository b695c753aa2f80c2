import sys

from mockkube.cli.main import main

sys.exit(main())
