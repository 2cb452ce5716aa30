package redis_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/connector/redis"
)

// adTable is the generator's ads table as a map.
func adTable(seed uint64, campaigns, adsPer int) map[string]string {
	m := map[string]string{}
	for _, a := range (gen.YSB{Seed: seed, Campaigns: campaigns, AdsPerCampaign: adsPer}).Ads() {
		m[a.AdID] = a.CampaignID
	}
	return m
}

// LoadCampaigns writes the original layout (SET ad campaign, SADD
// campaigns campaign), and ReadCampaigns reads back the same table,
// passing over the other keys under the prefix.
func TestCampaignsRoundTrip(t *testing.T) {
	url, prefix, c := server(t)
	ctx := context.Background()
	table := adTable(7, 150, 10) // 1,500 ads: more than one batch
	if err := redis.LoadCampaigns(ctx, url, prefix, table); err != nil {
		t.Fatal(err)
	}
	// The layout, read with plain commands.
	wantCampaigns := map[string]bool{}
	for _, cp := range table {
		wantCampaigns[cp] = true
	}
	members, err := c.SMembers(ctx, prefix+"campaigns").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(slices.Values(members)), slices.Sorted(maps.Keys(wantCampaigns)); !slices.Equal(got, want) {
		t.Fatalf("SMEMBERS campaigns: %d members, want %d", len(got), len(want))
	}
	for ad, cp := range table {
		if v, err := c.Get(ctx, prefix+ad).Result(); err != nil || v != cp {
			t.Fatalf("GET %s = %q, %v; want %q", ad, v, err, cp)
		}
	}
	// Other keys: a string that is no campaign, a result's hash and list.
	c.Set(ctx, prefix+"unrelated", "not-a-campaign", 0)
	var someCampaign string
	for cp := range wantCampaigns {
		someCampaign = cp
		break
	}
	c.HSet(ctx, prefix+someCampaign, "windows", "list-id", "1700000000000", "window-id")
	c.LPush(ctx, prefix+"list-id", "1700000000000")
	got, err := redis.ReadCampaigns(ctx, url, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, table) {
		t.Fatalf("ReadCampaigns: %d ads, want %d (or the same count, other values)", len(got), len(table))
	}
	// Loading again changes nothing.
	if err := redis.LoadCampaigns(ctx, url, prefix, table); err != nil {
		t.Fatal(err)
	}
	if got, err := redis.ReadCampaigns(ctx, url, prefix); err != nil || !maps.Equal(got, table) {
		t.Fatalf("ReadCampaigns after a second load: %d ads, %v; want %d", len(got), err, len(table))
	}
}

// A table whose ids would share keys is refused, naming the id, before
// anything is written.
func TestLoadCampaignsRefusesClashes(t *testing.T) {
	url, prefix, c := server(t)
	ctx := context.Background()
	cases := []struct {
		table map[string]string
		want  string
	}{
		{map[string]string{"a1": "c1", "c1": "c2"}, `"c1"`},
		{map[string]string{"a1": "campaigns"}, `"campaigns"`},
		{map[string]string{"campaigns": "c1"}, `"campaigns"`},
		{map[string]string{"a1": ""}, `"a1"`},
	}
	for _, tc := range cases {
		mustContain(t, redis.LoadCampaigns(ctx, url, prefix, tc.table), tc.want)
	}
	if keys := scanKeys(t, c, prefix); len(keys) != 0 {
		t.Fatalf("refused tables wrote %d keys: %q", len(keys), keys)
	}
	// An empty table writes nothing and reads back empty.
	if err := redis.LoadCampaigns(ctx, url, prefix, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := redis.ReadCampaigns(ctx, url, prefix); err != nil || len(got) != 0 {
		t.Fatalf("ReadCampaigns of nothing = %v, %v", got, err)
	}
}
