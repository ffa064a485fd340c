import sys

from oncotui.cli import main

sys.exit(main())
