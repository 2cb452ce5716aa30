package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/connector/redis"
	"github.com/weirstream/weir/jobs/ysb"
)

func ysbSetupCmd() *cobra.Command {
	var redisURI, campaigns string
	cmd := &cobra.Command{
		Use:   "ysb-setup",
		Short: "Load YSB's ad -> campaign table into Redis",
		Long: `Loads the ad_id,campaign_id table of --campaigns FILE (default: the built-in
generator's ads, those of weir gen ysb and weir run ysb with seed 1) into
Redis as the original benchmark lays it out: SET ad_id campaign_id per ad,
and the set "campaigns". weir run ysb --redis URI then joins against it
and writes its results there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if redisURI == "" {
				return fmt.Errorf("ysb-setup needs --redis redis://host:port")
			}
			ep, err := parseEndpoint("--redis", redisURI, "redis")
			if err != nil {
				return err
			}
			camp := ysb.FromAds(gen.YSB{Seed: 1}.Ads())
			if campaigns != "" {
				if camp, err = ysb.LoadCampaigns(campaigns); err != nil {
					return err
				}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			if err := redis.LoadCampaigns(ctx, ep.url, ep.name, camp); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "ysb-setup: %d ads of %d campaigns in %s\n", len(camp), len(campaignsOf(camp)), ep.url)
			return nil
		},
	}
	cmd.Flags().StringVar(&redisURI, "redis", "", "the Redis `URI`, redis://host:port[/db][?prefix=P] (P before every key)")
	cmd.Flags().StringVar(&campaigns, "campaigns", "", "ad_id,campaign_id CSV `FILE` (default: the generator's ads)")
	return cmd
}

func campaignsOf(c ysb.Campaigns) map[string]bool {
	s := map[string]bool{}
	for _, v := range c {
		s[v] = true
	}
	return s
}
