package main

import (
	_ "github.com/cpath/cpath/otf2" // registers the OTF2 format with graph: cpath reads OTF2 archives wherever it reads logs
)
