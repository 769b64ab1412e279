<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/prosilver/index_body.tpl (trimmed to the forum links) -->
<div class="forabg"><ul class="topiclist forums">
<!-- BEGIN catrow --><!-- BEGIN forumrow -->
<li class="row"><dl class="icon"><dd class="dterm"><h2 class="hierarchy"><a href="{catrow.forumrow.U_VIEWFORUM}" class="forumtitle">{catrow.forumrow.FORUM_NAME}</a></h2></dd></dl></li>
<!-- END forumrow --><!-- END catrow -->
</ul></div>
