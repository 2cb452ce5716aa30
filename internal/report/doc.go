// Package report turns the JSON lines of weir's benchmarks into a
// markdown page with tables and PNG plots (docs/benchmarks.md).
//
// A results file holds JSON lines (Read): entries that the report's
// runner wrote (a machine, a result of a suite with the exact command
// that printed it and how long it ran, or a command that printed no
// result and why), or lines copied from a `weir bench` command's output,
// whose suite their fields tell. Plan lists the commands a full report
// runs; Build turns entries into the page and its plots.
//
//	entries, err := report.Read(f, "results.jsonl")
//	r, err := report.Build(entries, report.Options{PlotDir: "benchmarks", Built: "2025-01-02"})
//	// write r.Markdown, and each r.Plots[i].Data to PlotDir/r.Plots[i].Name
//
// The package is pure: it runs no command, reads no file and no clock;
// cmd/weir's `bench report` does, and hands it the entries. A figure
// absent from the lines is shown as absent ("—"), and a suite with no
// result line as not available, with the reasons its runs gave: the page
// never shows a figure no command printed. Only this package and cmd/weir
// import gonum/plot.
package report
