import sys

from tensorlayout.cli import main

sys.exit(main())
