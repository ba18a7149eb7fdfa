from disputatio.cli import main

main()
