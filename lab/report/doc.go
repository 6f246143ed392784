// Package report turns the lab's results (package workload) into what
// cmd/timerlab prints and writes:
//   - text tables in the shape of the reference documents';
//   - a comparison of the scheduler with package time;
//   - JSON;
//   - log-log charts as PNG and SVG.
package report
