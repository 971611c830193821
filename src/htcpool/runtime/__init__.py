"""The live driver: daemons over HTTP, starter processes, sensors and SQLite state around the cores."""
