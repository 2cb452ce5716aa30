package weir_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A program that uses the in-memory API (the README's tour: weir and its
// file and generator connectors) links no Kafka, NATS, Redis or
// PostgreSQL client, each of which only its own connector package
// imports, no Pebble, which only package pebblestate imports, and
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
		if strings.Contains(dep, "cockroachdb") || strings.Contains(dep, "prometheus") || strings.Contains(dep, "getsentry") || strings.HasPrefix(dep, "gonum.org/") ||
			strings.Contains(dep, "twmb/franz-go") || strings.Contains(dep, "nats-io/") || strings.Contains(dep, "redis/go-redis") || strings.Contains(dep, "jackc/") {
			t.Errorf("the in-memory API links %s", dep)
		}
	}
	for pkg, dep := range map[string]string{"./connector/kafka": "github.com/twmb/franz-go/pkg/kgo", "./connector/nats": "github.com/nats-io/nats.go",
		"./connector/redis": "github.com/redis/go-redis/v9", "./connector/postgres": "github.com/jackc/pgx/v5"} {
		out, err = exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		if err != nil || !strings.Contains(string(out), dep+"\n") {
			t.Errorf("package %s does not list %s among its dependencies (%v): the check above proves nothing", pkg, dep, err)
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
