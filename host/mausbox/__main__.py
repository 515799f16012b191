from mausbox.cli import main

raise SystemExit(main())
