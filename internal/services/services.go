package services

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a server a test may need.
type Server struct {
	Name  string
	Addr  string   // host:port it listens on
	Start []string // the command that starts it, run by sh -c
	URL   string   // how a client reaches it
}

// The servers, as this kind of machine installs them.
var (
	Postgres = Server{
		Name:  "postgresql",
		Addr:  "127.0.0.1:5432",
		Start: []string{"pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"},
		URL:   "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
	}
	Redis = Server{
		Name:  "redis",
		Addr:  "127.0.0.1:6379",
		Start: []string{`mkdir -p /var/lib/redis /var/log/redis && redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log`},
		URL:   "redis://127.0.0.1:6379/0",
	}
	NATS = Server{
		Name:  "nats-server",
		Addr:  "127.0.0.1:4222",
		Start: []string{"mkdir -p /var/lib/nats-server && start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log"},
		URL:   "nats://127.0.0.1:4222",
	}
)

var mu sync.Mutex

// Need makes sure s is listening, starting it if not, and returns its
// URL. It fails the test if the server cannot be reached.
func Need(t testing.TB, s Server) string {
	t.Helper()
	if err := Ensure(s); err != nil {
		t.Fatal(err)
	}
	return s.URL
}

// Ensure makes sure s is listening, starting it if not.
func Ensure(s Server) error {
	mu.Lock()
	defer mu.Unlock()
	if listening(s.Addr) {
		return nil
	}
	var out strings.Builder
	for _, c := range s.Start {
		cmd := exec.Command("sh", "-c", c)
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Env = os.Environ()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s is not listening on %s and `%s` failed: %v: %s", s.Name, s.Addr, c, err, out.String())
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for !listening(s.Addr) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: started with `%s`, but nothing listens on %s after 30 s: %s", s.Name, strings.Join(s.Start, "; "), s.Addr, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
