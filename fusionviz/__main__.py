import sys

from fusionviz.cli import main

sys.exit(main())
