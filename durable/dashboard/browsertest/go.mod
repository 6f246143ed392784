module github.com/timewheel/timewheel/durable/dashboard/browsertest

go 1.25.0

replace github.com/timewheel/timewheel => ../../..

replace github.com/timewheel/timewheel/durable => ../..

require (
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/redis/go-redis/v9 v9.22.0
	github.com/timewheel/timewheel v0.0.0
	github.com/timewheel/timewheel/durable v0.0.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
)

replace github.com/timewheel/timewheel/cron/redisclaim => ../../../cron/redisclaim
