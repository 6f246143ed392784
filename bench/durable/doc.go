// Package durable compares timewheel's durable delayed jobs with asynq,
// the Redis job queue Go servers pick. It runs them as a team would:
// worker processes (1, 3 or 10), one redis-server with AOF everysec, and
// jobs scheduled by the benchmark's own process. It is a module of its
// own, so that asynq never enters the durable module's requirements:
//
//	cd bench/durable
//	go test -run '^$' -bench . -benchtime 1x -timeout 60m
//
// See BenchmarkProcesses for what it reports.
package durable
