module github.com/timewheel/timewheel/bench

go 1.25.0

require (
	github.com/Yiling-J/theine-go v0.6.3
	github.com/jellydator/ttlcache/v3 v3.4.1
	github.com/maypok86/otter/v2 v2.4.0
	github.com/timewheel/timewheel v0.0.0
	github.com/zeromicro/go-zero v1.10.3
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/fatih/color v1.18.0 // indirect
	github.com/klauspost/cpuid/v2 v2.0.9 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/spaolacci/murmur3 v1.1.0 // indirect
	github.com/zeebo/xxh3 v1.0.2 // indirect
	go.opentelemetry.io/otel v1.40.0 // indirect
	go.opentelemetry.io/otel/trace v1.40.0 // indirect
	go.uber.org/automaxprocs v1.6.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
)

replace github.com/timewheel/timewheel => ../
