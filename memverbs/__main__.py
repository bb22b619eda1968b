from memverbs.cli.main import main

raise SystemExit(main())
