from svgloo.cli import main

raise SystemExit(main())
