// Package bench compares timewheel's applications with the libraries Go
// servers use for the same jobs. It is a module of its own, so that the
// peers and their dependencies never enter the timewheel module:
//
//	cd bench
//	go test -run '^$' -bench . -benchtime 200000x
//
// Each benchmark function runs every implementation as a sub-benchmark
// (n=<entries>/impl=<name>), so one benchstat shows the ratios:
//
//	go test -run '^$' -bench . -count 6 > peers.txt
//	benchstat -col /impl peers.txt
package bench
