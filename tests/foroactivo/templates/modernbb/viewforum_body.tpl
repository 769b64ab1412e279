<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/modernbb/viewforum_body.tpl (trimmed: no search box or moderation) -->
<div class="sub-header">
	<div class="sub-header-info">
		<h1 class="page-title">
			<a href="{U_VIEW_FORUM}">{FORUM_NAME}</a>
		</h1>
		<div class="sub-header-path">
			<a class="nav" href="{U_INDEX}"><span>Índice</span></a>
		</div>
	</div>
</div>
<div class="topic-actions">
	<div class="pagination">
		{PAGINATION}
	</div>
</div>
{TOPICS_LIST_BOX}
<div class="topic-actions bottom">
	<div class="pagination">
		{PAGINATION}
	</div>
</div>
