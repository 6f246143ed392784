// Package durable compares timewheel's durable delayed jobs with asynq,
// the Redis job queue Go servers pick, as a team would run them: worker
// processes (1, 3 or 10) and one redis-server with AOF everysec, jobs
// scheduled by the benchmark's process. It is a module of its own, so
// that asynq never enters the durable module's requirements:
//
//	cd bench/durable
//	go test -run '^$' -bench . -benchtime 1x -timeout 60m
//
// See BenchmarkProcesses for what it reports.
package durable
