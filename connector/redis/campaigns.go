package redis

import (
	"context"
	"fmt"
	"slices"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// CampaignsKey is the key, after the prefix, of the set of campaign ids.
const CampaignsKey = "campaigns"

// WindowsField is the field of a campaign's hash that holds the id of
// the campaign's list of windows.
const WindowsField = "windows"

// LoadCampaigns writes the campaign table as the benchmark's setup does:
// SET <ad_id> <campaign_id> for every ad and SADD campaigns <campaign_id>
// for every campaign, each key under prefix, pipelined in batches. Keys
// already there are overwritten; nothing else is removed (the original
// setup empties the whole database first). An empty id, or an id that
// would share a key with another (an ad named like a campaign, or
// "campaigns"), is an error, and nothing is written.
func LoadCampaigns(ctx context.Context, url, prefix string, adToCampaign map[string]string) error {
	ads, campaigns, err := checkTable(adToCampaign)
	if err != nil {
		return err
	}
	c, err := connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close()
	for lo := 0; lo < len(ads); lo += batchSize {
		err := pipelined(ctx, c, false, func(p goredis.Pipeliner) {
			for _, ad := range ads[lo:min(lo+batchSize, len(ads))] {
				p.Set(ctx, prefix+ad, adToCampaign[ad], 0)
			}
		})
		if err != nil {
			return err
		}
	}
	for lo := 0; lo < len(campaigns); lo += batchSize {
		members := make([]any, 0, batchSize)
		for _, cp := range campaigns[lo:min(lo+batchSize, len(campaigns))] {
			members = append(members, cp)
		}
		if err := c.SAdd(ctx, prefix+CampaignsKey, members...).Err(); err != nil {
			return keyError("SADD", prefix+CampaignsKey, err)
		}
	}
	return nil
}

// checkTable returns the ads and campaigns of a table, sorted, or an
// error for ids that cannot be written apart.
func checkTable(adToCampaign map[string]string) (ads, campaigns []string, err error) {
	seen := map[string]bool{}
	for ad, cp := range adToCampaign {
		if ad == "" || cp == "" {
			return nil, nil, fmt.Errorf("redis: campaign table: ad %q has campaign %q; neither may be empty", ad, cp)
		}
		ads = append(ads, ad)
		if !seen[cp] {
			seen[cp] = true
			campaigns = append(campaigns, cp)
		}
	}
	for _, ad := range ads {
		if seen[ad] || ad == CampaignsKey {
			return nil, nil, fmt.Errorf("redis: campaign table: ad id %q is also a campaign id or %q; each id is a key of its own", ad, CampaignsKey)
		}
	}
	if seen[CampaignsKey] {
		return nil, nil, fmt.Errorf("redis: campaign table: a campaign is named %q, the key of the set of campaigns", CampaignsKey)
	}
	slices.Sort(ads)
	slices.Sort(campaigns)
	return ads, campaigns, nil
}

// ReadCampaigns reads back the campaign table LoadCampaigns (or the
// original setup) wrote under prefix. The set of campaigns does not name
// the ads, so it walks the keys under prefix with SCAN, keeping those
// that hold strings (SCAN's TYPE string: the hashes and lists of results
// are passed over), reads their values with MGET, and keeps the ads whose
// value is a member of the set of campaigns, which leaves out unrelated
// string keys of a shared database.
func ReadCampaigns(ctx context.Context, url, prefix string) (map[string]string, error) {
	c, err := connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	members, err := c.SMembers(ctx, prefix+CampaignsKey).Result()
	if err != nil {
		return nil, keyError("SMEMBERS", prefix+CampaignsKey, err)
	}
	isCampaign := make(map[string]bool, len(members))
	for _, m := range members {
		isCampaign[m] = true
	}
	out := map[string]string{}
	match := globEscape(prefix) + "*"
	var cursor uint64
	for {
		keys, next, err := c.ScanType(ctx, cursor, match, batchSize, "string").Result()
		if err != nil {
			return nil, fmt.Errorf("redis: SCAN %q: %w", match, err)
		}
		if len(keys) > 0 {
			vals, err := c.MGet(ctx, keys...).Result()
			if err != nil {
				return nil, fmt.Errorf("redis: MGET of %d keys from %q: %w", len(keys), keys[0], err)
			}
			for i, k := range keys {
				if v, ok := vals[i].(string); ok && isCampaign[v] {
					out[strings.TrimPrefix(k, prefix)] = v
				}
			}
		}
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
}
