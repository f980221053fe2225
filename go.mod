module github.com/cpath/cpath

go 1.22

require (
	github.com/emer/empi v1.0.22
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/spf13/cobra v1.10.2
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
