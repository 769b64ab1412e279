<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/subsilver/index_body.tpl (trimmed to the forum links) -->
<table class="forumline" width="100%" border="0" cellspacing="1" cellpadding="0">
<!-- BEGIN catrow --><!-- BEGIN forumrow -->
<tr><td class="row1" width="100%"><h2 class="hierarchy"><a class="forumlink" href="{catrow.forumrow.U_VIEWFORUM}">{catrow.forumrow.FORUM_NAME}</a></h2></td></tr>
<!-- END forumrow --><!-- END catrow -->
</table>
