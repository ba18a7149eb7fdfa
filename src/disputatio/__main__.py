from disputatio.entry import main

main()
