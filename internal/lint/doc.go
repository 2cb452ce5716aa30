// Package lint checks the house rules that docs/design.md states, over
// the module's source: every package has a doc.go; no file is over
// MaxFileLines lines and no function over MaxFuncLines, but for a short
// list of exceptions; go statements appear only in the packages that own
// goroutines; the pure packages read no clock, start no goroutines, open
// no files or sockets and take no locks; the root package does not import
// Pebble. Its tests run the checks on the module and on fixtures that
// break each rule.
package lint
