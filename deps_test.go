package weir_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A program that uses the in-memory API (the README's tour: weir and its
// connectors) links no Pebble, which only package pebblestate imports, and
// no gonum, which only the benchmark report (internal/report, cmd/weir)
// imports, and no Prometheus client, which only package prom (and
// cmd/weir, through it) imports.
func TestInMemoryAPILinksNoPebble(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".", "./connector/file", "./connector/gen").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "cockroachdb") || strings.Contains(dep, "prometheus") || strings.Contains(dep, "getsentry") || strings.HasPrefix(dep, "gonum.org/") {
			t.Errorf("the in-memory API links %s", dep)
		}
	}
	out, err = exec.Command(goTool, "list", "-deps", "./pebblestate").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "github.com/cockroachdb/pebble/v2\n") {
		t.Errorf("package pebblestate does not list Pebble among its dependencies (%v): the check above proves nothing", err)
	}
	out, err = exec.Command(goTool, "list", "-deps", "./prom").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "github.com/prometheus/client_golang/prometheus\n") {
		t.Errorf("package prom does not list client_golang among its dependencies (%v): the check above proves nothing", err)
	}
	out, err = exec.Command(goTool, "list", "-deps", "./internal/report").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "gonum.org/v1/plot\n") {
		t.Errorf("package internal/report does not list gonum among its dependencies (%v): the check above proves nothing", err)
	}
}
