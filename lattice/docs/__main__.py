import sys

from lattice.docs.pages import main

sys.exit(main())
