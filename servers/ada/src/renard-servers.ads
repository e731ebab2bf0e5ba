--  One thread's event loop (SPEC §7): epoll over its SO_REUSEPORT listener, the shutdown
--  eventfd and its connections; eviction at the cap (§7.5) and the drain (§7.6).
with Renard.Config;
with Renard.OS;

package Renard.Servers is

   --  Everything the loops share, set before they start.
   type Shared is record
      Settings : Config.Settings;
      Shutdown : OS.FD := OS.No_FD;  --  readable once SIGTERM or SIGINT arrived
   end record;

   --  Serve on Listener until the drain ends (SPEC §7.6); False if the loop could not
   --  be set up.
   function Run (S : Shared; Listener : OS.FD) return Boolean;

end Renard.Servers;
