package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/redis"
	"github.com/weirstream/weir/internal/services"
	"github.com/weirstream/weir/jobs/ysb"
)

// devKafka starts `weir dev kafka` on a free port with the topics given
// and returns its address once it listens.
func devKafka(t *testing.T, topics ...string) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePorts(t))
	args := []string{"dev", "kafka", "--addr", addr}
	for _, tp := range topics {
		args = append(args, "--topic", tp)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, weirBin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil || !strings.Contains(line, "a broker on "+addr) {
		t.Fatalf("weir dev kafka: %q %v", line, err)
	}
	return addr
}

// Events from a file into a topic of `weir dev kafka`, YSB from the topic
// into another, and that topic into a file, equal the reference; so does
// YSB from the topic joined against Redis (weir ysb-setup) with its
// results in Redis's original layout.
func TestPipeAndYSBThroughDevKafka(t *testing.T) {
	addr := devKafka(t, "ad-events:3")
	dir := t.TempDir()
	events, ads := filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "ads.csv")
	mustSucceed(t, "gen", "ysb", "--events", "60000", "--out", events, "--campaigns", ads)
	mustSucceed(t, "pipe", "--source", "file://"+events, "--sink", "kafka://"+addr+"/ad-events", "--workers", "2")
	back := filepath.Join(dir, "back.jsonl")
	mustSucceed(t, "pipe", "--source", "kafka://"+addr+"/ad-events", "--bounded", "--sink", "file://"+back, "--workers", "2")
	sorted := func(s string) []string {
		l := strings.Split(strings.TrimSpace(s), "\n")
		slices.Sort(l)
		return l
	}
	if got, want := sorted(readFile(t, back)), sorted(readFile(t, events)); !slices.Equal(got, want) {
		t.Fatalf("file -> topic -> file: %d lines, want %d", len(got), len(want))
	}
	// Through a consumer group: a second run resumes where the first
	// committed, at the end.
	for i, want := range []int{60000, 0} {
		g := filepath.Join(dir, fmt.Sprintf("group%d.jsonl", i))
		mustSucceed(t, "pipe", "--source", "kafka://"+addr+"/ad-events?group=cli", "--bounded", "--sink", "file://"+g)
		if got := strings.Count(readFile(t, g), "\n"); got != want {
			t.Errorf("run %d through group cli: %d lines, want %d", i, got, want)
		}
	}
	ref := filepath.Join(dir, "ref.csv")
	mustSucceed(t, "run", "ysb", "--events", events, "--campaigns", ads, "--out", ref)
	want := csvRows(readFile(t, ref))

	mustSucceed(t, "run", "ysb", "--source", "kafka://"+addr+"/ad-events", "--bounded", "--campaigns", ads, "--sink", "kafka://"+addr+"/results")
	res := filepath.Join(dir, "res.csv")
	mustSucceed(t, "pipe", "--source", "kafka://"+addr+"/results", "--bounded", "--sink", "file://"+res)
	if got := sorted(readFile(t, res)); !slices.Equal(got, want) {
		t.Errorf("topic -> ysb -> topic: %d windows, want %d\n%s", len(got), len(want), firstDiff(strings.Join(got, "\n"), strings.Join(want, "\n")))
	}

	rURL := services.Need(t, services.Redis)
	prefix := fmt.Sprintf("weirtest-%d:", time.Now().UnixNano())
	t.Cleanup(func() { redisDel(rURL, prefix) })
	uri := rURL + "?prefix=" + prefix
	mustSucceed(t, "ysb-setup", "--redis", uri, "--campaigns", ads)
	mustSucceed(t, "run", "ysb", "--source", "kafka://"+addr+"/ad-events", "--bounded", "--redis", uri)
	counts, err := redis.ReadYSBResults(context.Background(), rURL, prefix)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for c, ws := range counts {
		for w, n := range ws {
			got = append(got, fmt.Sprintf("%s,%d,%d", c, w, n))
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("topic -> ysb joined against redis -> redis: %d windows, want %d", len(got), len(want))
	}
}

// A record of a topic that does not decode goes to --dead-letter with its
// topic, partition and offset, counted; the rest are counted right.
func TestKafkaDeadLetters(t *testing.T) {
	addr := kafkaCluster(t, "ad-events", 2)
	dir := t.TempDir()
	evs, camp := ysbInput(5000, 41, 20_000)
	lines := jsonLines(evs)
	lines = append(lines[:100:100], append([]string{`{"ad_id":`}, lines[100:]...)...)
	produceLines(t, addr, "ad-events", lines)
	campaigns, dl := filepath.Join(dir, "campaigns.csv"), filepath.Join(dir, "bad.jsonl")
	writeCampaigns(t, campaigns, camp)
	out := filepath.Join(dir, "out.csv")
	r := mustSucceed(t, "run", "ysb", "--source", "kafka://"+addr+"/ad-events", "--bounded", "--campaigns", campaigns, "--out", out, "--dead-letter", dl)
	if !strings.Contains(r.stderr, "1 bad records") {
		t.Errorf("summary does not count the bad record: %s", r.stderr)
	}
	if got, want := csvRows(readFile(t, out)), csvRows(ysbCSV(t, evs, camp)); !slices.Equal(got, want) {
		t.Errorf("%d windows, want %d", len(got), len(want))
	}
	letters, err := file.ReadDeadLetters(dl)
	if err != nil {
		t.Fatal(err)
	}
	// Round-robin: line 100 went to partition 100 mod 2, at offset 50.
	if len(letters) != 1 || letters[0].Split != "ad-events/0" || letters[0].Offset != 50 || letters[0].Record != `{"ad_id":` {
		t.Errorf("letters: %+v", letters)
	}
}

// Settings that cannot work are refused at start, naming what is wrong.
func TestConnectErrors(t *testing.T) {
	addr := kafkaCluster(t, "ad-events", 1)
	dir := t.TempDir()
	ads := filepath.Join(dir, "ads.csv")
	writeCampaigns(t, ads, ysb.Campaigns{"a": "c"})
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"pipe", "--source", "ftp://x/y", "--sink", "file://" + filepath.Join(dir, "o")}, []string{"--source ftp://x/y", "kafka://host:port/topic"}},
		{[]string{"pipe", "--source", "kafka://" + addr + "/ad-events"}, []string{"--sink"}},
		{[]string{"pipe", "--source", "kafka://" + addr + "/nope", "--bounded", "--sink", "file://" + filepath.Join(dir, "o")}, []string{"topic nope does not exist at " + addr}},
		{[]string{"pipe", "--source", "kafka://" + addr + "/ad-events", "--sink", "postgres://u@h:1/db"}, []string{"--sink postgres://u@h:1/db", "file://path"}},
		{[]string{"pipe", "--source", "kafka://h/t", "--sink", "file://x"}, []string{"--source kafka://h/t", "host:port"}},
		{[]string{"run", "ysb", "--source", "kafka://" + addr + "/ad-events", "--out", filepath.Join(dir, "o")}, []string{"--campaigns FILE or --redis URI"}},
		{[]string{"run", "ysb", "--source", "kafka://" + addr + "/ad-events", "--campaigns", ads}, []string{"--sink URI, --out FILE or --redis URI"}},
		{[]string{"run", "ysb", "--bounded", "--events", "10"}, []string{"--bounded needs --source"}},
		{[]string{"run", "ysb", "--source", "nats://127.0.0.1:4222", "--campaigns", ads, "--out", filepath.Join(dir, "o")}, []string{"nats://host:port/stream"}},
		{[]string{"pipe", "--source", "kafka://" + addr + "/ad-events?txn=p", "--sink", "file://" + filepath.Join(dir, "o")}, []string{"txn= names a sink's transactional ids"}},
		{[]string{"pipe", "--source", "nats://127.0.0.1:4222/s?ordered=yes", "--sink", "file://" + filepath.Join(dir, "o")}, []string{"ordered=yes: want 1 or 0"}},
		{[]string{"pipe", "--source", "nats://127.0.0.1:4222/s?ordered=1&consumer=c", "--sink", "file://" + filepath.Join(dir, "o")}, []string{"both consumer= and ordered=1"}},
		{[]string{"pipe", "--source", "file://" + ads, "--sink", "nats://127.0.0.1:4222/s?consumer=c"}, []string{"a sink takes neither"}},
		{[]string{"pipe", "--source", "file://" + ads, "--sink", "kafka://" + addr + "/out?group=g"}, []string{"group= names a source's consumer group"}},
		{[]string{"ysb-setup"}, []string{"--redis"}},
		{[]string{"dev", "kafka", "--addr", "nohost"}, []string{"--addr nohost"}},
		{[]string{"dev", "kafka", "--topic", "t"}, []string{"--topic t", "NAME:PARTITIONS"}},
	} {
		mustFail(t, c.args, c.want...)
	}
}

func redisDel(url, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opt, err := goredis.ParseURL(url)
	if err != nil {
		return
	}
	c := goredis.NewClient(opt)
	defer c.Close()
	keys, _ := c.Keys(ctx, prefix+"*").Result()
	if len(keys) > 0 {
		c.Del(ctx, keys...)
	}
}

// run wordcount and run nexmark take --source and --sink too: a topic's
// lines counted into another topic equal the reference; Nexmark's q5 from
// a topic equals q5 from the file the topic was filled from (rows in any
// order), and q1's
// rows to a file sink equal its --out rows.
func TestRunCommandsTakeURIs(t *testing.T) {
	addr := kafkaCluster(t, "lines", 3)
	var text []string
	for i := range 20_000 {
		text = append(text, fmt.Sprintf("w%d v%d the", i%997, i%13))
	}
	produceLines(t, addr, "lines", text)
	mustSucceed(t, "run", "wordcount", "--source", "kafka://"+addr+"/lines", "--bounded", "--sink", "kafka://"+addr+"/counts")
	if got, want := consumeLines(t, addr, "counts"), csvRows(wordcountCSV(strings.Join(text, "\n")+"\n")); !slices.Equal(got, want) {
		t.Errorf("wordcount topic -> topic: %d words, want %d\n%s", len(got), len(want), firstDiff(strings.Join(got, "\n"), strings.Join(want, "\n")))
	}

	dir := t.TempDir()
	ev := filepath.Join(dir, "ev.jsonl")
	mustSucceed(t, "gen", "nexmark", "--events", "30000", "--event-rate", "1000", "--out", ev)
	addr = kafkaCluster(t, "nexmark", 2)
	produceLines(t, addr, "nexmark", strings.Split(strings.TrimSpace(readFile(t, ev)), "\n"))
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	mustSucceed(t, "run", "nexmark", "--query", "q5", "--input", ev, "--out", a)
	mustSucceed(t, "run", "nexmark", "--query", "q5", "--source", "kafka://"+addr+"/nexmark", "--bounded", "--out", b)
	if got, want := csvRows(readFile(t, b)), csvRows(readFile(t, a)); !slices.Equal(got, want) {
		t.Errorf("q5 from a topic differs from q5 from its file\n%s", firstDiff(strings.Join(got, "\n"), strings.Join(want, "\n")))
	}
	c, d := filepath.Join(dir, "c.csv"), filepath.Join(dir, "d.csv")
	mustSucceed(t, "run", "nexmark", "--query", "q1", "--input", ev, "--out", c)
	mustSucceed(t, "run", "nexmark", "--query", "q1", "--input", ev, "--sink", "file://"+d)
	if got, want := strings.Split(strings.TrimSpace(readFile(t, d)), "\n"), csvRows(readFile(t, c)); !slices.Equal(sortedCopy(got), want) {
		t.Errorf("q1 to a file sink: %d rows, want %d", len(got), len(want))
	}
	mustFail(t, []string{"run", "wordcount", "--input", ev, "--source", "kafka://" + addr + "/lines", "--out", a}, "give --input or --source URI, not both")
	mustFail(t, []string{"run", "wordcount", "--input", ev}, "--out or --sink URI is required")
	mustFail(t, []string{"run", "nexmark", "--query", "q1", "--source", "kafka://" + addr + "/nexmark", "--events", "5"}, "--events 5: the events come from --input or --source")
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
