// Package ui is a running job's dashboard: an HTTP handler that serves an
// embedded page (static/, plain HTML, CSS and JavaScript drawing SVG; no
// build step) and the JSON it polls: the job's figures (Job.Stats, every
// process's summary, so any process's page shows the whole job), its
// graph (Job.Topology) and a switch that turns activity tracing on for a
// while. It also serves the job's rescale control, POST /rescale
// (RescaleHandler, which the weir command serves beside the Prometheus
// metrics too), which calls Job.Rescale. The page keeps the history it
// charts; the handler keeps nothing and starts no goroutines (the weir
// command runs the server).
package ui
