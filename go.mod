module github.com/timewheel/timewheel

go 1.25.0

require (
	github.com/robfig/cron/v3 v3.0.1
	go.uber.org/goleak v1.3.0
	pgregory.net/rapid v1.3.0
)
