import sys

from fieldqa.cli import main

sys.exit(main())
