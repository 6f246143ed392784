// Package browsertest holds the dashboard's test in a real browser:
// Debian's chromium, headless, driven over the DevTools protocol by
// chromedp. It is a module of its own, so that durable's users do not
// find chromedp in their module graph.
package browsertest
